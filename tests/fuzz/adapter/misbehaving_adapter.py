#!/usr/bin/env python3
"""An adapter that answers like examples/python/vllm_50874_adapter.py until its Nth capture
request, then misbehaves one way: the tests check how r3fuzz reports each.

Modes starting with "batch_" ask for the batched exchange in the hello; their Nth request is
the Nth case's batch, and each lies about the batch as a whole: batch_count (one reply too
many), batch_order (the first two replies swapped), batch_short (the last reply left out),
batch_cut (half of the line, then exit 4), batch_sleep (no reply).

usage: misbehaving_adapter.py MODE N
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "python"))
import vllm_50874_adapter as good  # noqa: E402

MODE, N = sys.argv[1], int(sys.argv[2])
BATCH = MODE.startswith("batch_")


def send(text):
    sys.stdout.write(text)
    sys.stdout.flush()


seen = 0
for line in sys.stdin:
    request = json.loads(line)
    if request.get("type") == "hello":
        protocol = "r3fuzz-adapter/0" if MODE == "old_protocol" else good.PROTOCOL
        hello = {"type": "hello", "protocol": protocol, "name": "misbehaving", "version": MODE}
        if BATCH:
            hello["batch"] = True
        send(json.dumps(hello) + "\n")
        continue
    seen += 1
    if seen == N:
        if MODE == "sleep":
            time.sleep(30)
        elif MODE == "garbage":
            send("this is not json\n")
            continue
        elif MODE == "wrong_id":
            send('{"id": 99, "rows": []}\n')
            continue
        elif MODE == "exit":
            sys.exit(3)
        elif MODE == "partial":
            send('{"id": %d, "ro' % request["id"])
            sys.exit(4)
        elif MODE == "short_row":
            send('{"id": %d, "rows": [{"dst_row": 0, "values": [1]}]}\n' % request["id"])
            continue
        elif MODE == "overflow":
            # Writes this rank's first routing row two rows past the capture buffer's end.
            rows = request["capture_buffer"][0]
            send(json.dumps({"id": request["id"], "branch": "local",
                             "rows": [{"dst_row": rows + 1, "values": request["topk_ids"][0]}]}) + "\n")
            continue
        elif BATCH:
            replies = [good.handle(r) for r in good.unpack(request)]
            if MODE == "batch_count":
                replies.append(replies[-1])
            elif MODE == "batch_order":
                replies[0], replies[1] = replies[1], replies[0]
            elif MODE == "batch_short":
                replies.pop()
            elif MODE == "batch_cut":
                line = json.dumps({"replies": replies})
                send(line[:len(line) // 2])
                sys.exit(4)
            elif MODE == "batch_sleep":
                time.sleep(30)
            send(json.dumps({"replies": replies}) + "\n")
            continue
    send(json.dumps(good.answer(request, BATCH)) + "\n")
