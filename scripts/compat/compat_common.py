# Shared by the Python drivers of the compatibility suite: the command line and the record shape.
import argparse
import json
import sys


def base_args():
    p = argparse.ArgumentParser()
    p.add_argument("op", choices=["produce", "consume", "member", "admin"])
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--topic", required=True)
    p.add_argument("--count", type=int, default=0)
    p.add_argument("--expect", type=int, default=0)
    p.add_argument("--acks", default="1")
    p.add_argument("--idempotent", action="store_true")
    p.add_argument("--codec", default="none")
    p.add_argument("--prefix", default="r")
    p.add_argument("--size", type=int, default=200)
    p.add_argument("--partition", type=int, default=-1)
    p.add_argument("--group", default="")
    p.add_argument("--max", type=int, default=0)
    p.add_argument("--timeout", type=float, default=60)
    return p


def record_value(prefix, i, size):
    """The value of record i: its key, then filler up to `size` bytes (checked by the tests)."""
    head = f"{prefix}-{i}|"
    return (head + "x" * max(0, size - len(head))).encode()


def emit(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
