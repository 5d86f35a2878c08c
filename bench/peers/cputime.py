"""CPU time of this process and all its descendants (threads included), from
/proc: what a loader spent, whatever else runs on the machine. Used by
peer.py and sluice_loader.py to report images per CPU-second of the timed
part of an epoch (worker processes stay alive across it, so getrusage's
RUSAGE_CHILDREN would not see them)."""
import os

_TICK = os.sysconf("SC_CLK_TCK")


def _children(pid):
    out = []
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def tree_cpu_seconds(pid=None):
    """utime + stime of pid (default: this process) and its live descendants."""
    todo, total = [pid or os.getpid()], 0
    while todo:
        p = todo.pop()
        try:
            with open("/proc/%d/stat" % p) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
        except (OSError, IndexError, ValueError):
            continue
        todo += _children(p)
    return total / _TICK
