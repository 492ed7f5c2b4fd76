"""The command's processes keep the memory they free for the next block, instead of returning it to
the kernel and faulting it back in.

A block is read, rendered and written as a few buffers of about its size (a megabyte by default),
freed when the block is done. glibc's ``malloc`` gives the top of its heap back to the kernel once
more than its trim threshold is free there, which such a block's end crosses, so every block faulted
its pages in again, each page zeroed by the kernel: most of a worker process's system time. Kept as
padding at the heap's top (``M_TOP_PAD``), they are reused. The process still gives back what is
free beyond the padding, so its memory stays bounded by the block and the largest record.
"""

from __future__ import annotations

import os

__all__ = ["TOP_PAD", "keep_freed_memory"]

#: Bytes of free memory kept at the top of the heap: room for a default block's buffers several times over.
TOP_PAD = 16 << 20
#: Allocations from this size on get memory of their own (``mmap``) rather than the heap's, as they
#: would by default once glibc has seen a block's buffer freed (its threshold then rises to that size);
#: setting the padding turns that adjustment off, so it is set here to the largest value glibc allows.
MMAP_THRESHOLD = 32 << 20

# mallopt's parameters (malloc.h).
_M_TOP_PAD = -2
_M_MMAP_THRESHOLD = -3


def keep_freed_memory() -> bool:
    """With glibc, set ``malloc``'s top padding to :data:`TOP_PAD` and its threshold for memory of
    its own to :data:`MMAP_THRESHOLD` for this process; ``True`` when both were set. Anywhere else
    (another C library, a platform without ``mallopt``) nothing is changed and ``False`` returned:
    the allocator's defaults cost time, not correctness."""
    try:
        library = os.confstr("CS_GNU_LIBC_VERSION")
    except (AttributeError, ValueError, OSError):  # no confstr, or no such name on this platform
        return False
    if not library or not library.startswith("glibc "):
        return False
    import ctypes  # (only here: a run of one block has no use for it)

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    # (mallopt returns 1 on success, 0 for a value it refuses)
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TOP_PAD, TOP_PAD))
