#!/usr/bin/env python3
"""bench/trainer_gpu_torch.py: the PyTorch eager baseline for the trainer's CUDA backend.

The same model as trainer/ (Dense 784->128 ReLU, Dropout 0.2, Dense 128->10, sparse softmax
cross-entropy from logits, Adam lr 1e-3 eps 1e-7, batch 64), trained for one epoch on one
GPU with plain PyTorch eager code, as most people would write it, at its best: the whole
training set sits on the GPU before timing starts, batches are indexed there, the loop never
syncs with the host, TF32 is off (fp32 as ours) and Adam uses PyTorch's default CUDA
implementation (foreach). Timing starts after 20 warm-up steps and ends with a synchronize.

    python3 bench/trainer_gpu_torch.py [--data DIR] [--epochs 1] [--batch 64]

Prints one JSON object: samples_per_sec, step_us, steps, final_loss, torch, device.
tests/gpu/run.sh runs it and prints the ratio to the trainer's samples/s.
"""
import argparse
import gzip
import json
import os
import sys
import time


def idx(path, offset):
    import numpy as np

    with gzip.open(path) as f:
        return np.frombuffer(f.read(), np.uint8, offset=offset)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--warmup", type=int, default=20)
    args = ap.parse_args()

    import torch
    import torch.nn as nn

    if not torch.cuda.is_available():
        print(json.dumps({"error": "torch.cuda.is_available() is False"}))
        return 77
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    images_path = os.path.join(args.data, "train-images-idx3-ubyte.gz")
    if os.path.exists(images_path):
        x = torch.tensor(idx(images_path, 16).reshape(-1, 784), device=dev, dtype=torch.float32) / 255.0
        y = torch.tensor(idx(os.path.join(args.data, "train-labels-idx1-ubyte.gz"), 8), device=dev, dtype=torch.long)
        data = "fashion-mnist"
    else:  # the same shapes; the timing does not depend on the pixel values
        g = torch.Generator(device=dev).manual_seed(0)
        x = torch.rand(60000, 784, device=dev, generator=g)
        y = torch.randint(0, 10, (60000,), device=dev, generator=g)
        data = "synthetic"

    torch.manual_seed(42)
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Dropout(0.2), nn.Linear(128, 10)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-7)
    loss_fn = nn.CrossEntropyLoss()
    model.train()

    steps_per_epoch = x.shape[0] // args.batch  # the remainder is dropped, as the trainer does
    total = steps_per_epoch * args.epochs
    t0 = None
    step = 0
    for epoch in range(args.epochs):
        perm = torch.randperm(x.shape[0], device=dev)
        for s in range(steps_per_epoch):
            if step == args.warmup:
                torch.cuda.synchronize()
                t0 = time.perf_counter()
            b = perm[s * args.batch:(s + 1) * args.batch]
            loss = loss_fn(model(x[b]), y[b])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    timed = total - args.warmup
    seconds = t1 - t0
    print(json.dumps({
        "samples_per_sec": timed * args.batch / seconds,
        "step_us": seconds / timed * 1e6,
        "steps": total,
        "timed_steps": timed,
        "final_loss": float(loss.item()),
        "data": data,
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(0),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
