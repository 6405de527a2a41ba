"""Does the host probe move with steal time or with the guest's own load? (diagnostic;
run with the repository root on PYTHONPATH)

On the lent H100 host (2026-11-26) the probe toggled between about 1.3 and 3.0 µs from
one second to the next with 0.0% steal time and the guest 99.8% idle, and a single
pinned core showed both speeds (tools/diag/host_probe.py): the cause lies below the
guest."""

import time

from gpubook.cpuload import host_speed


def stat():
    return list(map(int, open("/proc/stat").readline().split()[1:]))


for _ in range(12):
    a = stat()
    us = host_speed(calls=2000, repeats=5)
    time.sleep(1.0)
    d = [y - x for x, y in zip(a, stat())]
    total = sum(d)
    print(
        f"probe {us:.2f} us  steal {100 * d[7] / total:.1f}%  "
        f"user {100 * d[0] / total:.1f}%  idle {100 * d[3] / total:.1f}%",
        flush=True,
    )
