# The event files are read back by an independent reader: the tensorboard package from
# PyPI, installed into a venv under the build folder when missing.
source "$(dirname "$0")/lib.sh"

VENV="${TRAINER_TB_VENV:-$(dirname "$WORK")/tb-venv}"
if ! "$VENV/bin/python" -c 'import tensorboard' 2>/dev/null; then
  echo "installing tensorboard into $VENV"
  python3 -m venv "$VENV" || fail "python3 -m venv failed (apt-get install python3-venv)"
  "$VENV/bin/pip" install -q tensorboard || fail "pip install tensorboard failed (is PyPI reachable?)"
fi

"$TRAINER" "${SHORT[@]}" --seed 5 --log-every 10 --logdir "$WORK/logs" --json >"$WORK/run.json"
"$VENV/bin/python" - "$WORK/logs" "$WORK/run.json" <<'PY'
import glob, json, struct, sys
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

logdir, run = sys.argv[1], json.load(open(sys.argv[2]))
files = glob.glob(logdir + "/events.out.tfevents.*")
assert len(files) == 1, files

# TFRecord framing with masked CRC32C, checked with TensorBoard's own CRC.
data = open(files[0], "rb").read()
pos = records = 0
while pos < len(data):
    header = data[pos:pos + 8]
    (length,) = struct.unpack("<Q", header)
    (hcrc,) = struct.unpack("<I", data[pos + 8:pos + 12])
    assert hcrc == masked_crc32c(header), "length crc at %d" % pos
    body = data[pos + 12:pos + 12 + length]
    (dcrc,) = struct.unpack("<I", data[pos + 12 + length:pos + 16 + length])
    assert dcrc == masked_crc32c(body), "data crc at %d" % pos
    pos += 16 + length
    records += 1
assert pos == len(data)

ea = event_accumulator.EventAccumulator(logdir)
ea.Reload()
tags = ea.Tags()["scalars"]
for t in ("train/loss", "train/samples_per_sec", "test/accuracy", "test/loss"):
    assert t in tags, (t, tags)
loss = ea.Scalars("train/loss")
assert [e.step for e in loss] == list(range(10, 101, 10)), [e.step for e in loss]
assert all(0 < e.value < 5 for e in loss), loss
acc = ea.Scalars("test/accuracy")
assert [e.step for e in acc] == [1, 2], acc
assert abs(acc[-1].value - run["test_accuracy"]) < 1e-6, (acc[-1].value, run["test_accuracy"])
print("ok: %d records, CRCs valid; train/loss %d points (last %.4f); test/accuracy %s" %
      (records, len(loss), loss[-1].value, [round(e.value, 4) for e in acc]))
PY
