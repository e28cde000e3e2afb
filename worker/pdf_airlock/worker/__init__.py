"""pdf-airlock worker side: the zygote and the sandboxed job child.

Everything in this package runs outside the trust boundary's safe side: the zygote is
half-trusted (it never parses a document), the job child is untrusted (it parses exactly one
document inside the sandbox and exits). Nothing here imports ``server``.
"""
