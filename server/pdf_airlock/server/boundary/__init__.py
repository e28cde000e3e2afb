"""The supervisor's side of the trust boundary: what may be read and what may be passed on.

``paths`` (a document path or inline data to an open, checked fd under a root), ``sanitize``
(control, bidi and zero-width characters out of every untrusted string) and ``png`` (an image a
child made, checked before a client sees it).
"""
