"""The zygote and its jobs: worker slots and the queue (``pool``), the zygote's control socket
(``zygote_link``), pre-forked and resident children (``spares``), a child's bounded output
(``child_output``, ``readiness``), its verdict (``verdict``) and the sandbox probe (``probe``).
"""
