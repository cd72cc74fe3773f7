#!/usr/bin/env python3
"""A straightforward SimPy model of the cuzk proving pipeline, the baseline of the
simulator's speed benchmark (benches/sim.rs) and an independent cross-check of its
results (simulator/tests/simpy_parity.rs).

Same pipeline as simulator/src/pipeline.rs for fixed costs: c proofs, j in flight,
`partitions` per proof, pw synthesis workers, one unbounded GPU queue, gw GPU workers
per GPU, lock modes `whole` and `kernels`, split finalisation. Not modelled (the Rust
model has them): CPU core / bandwidth processor sharing (so keep sum of demands within
the machine when comparing), contention, RAM/VRAM, uploads, two_lock.

Usage:
  simpy_pipeline.py sweep            # the 1000-configuration benchmark sweep; prints seconds
  simpy_pipeline.py one PW GW LOCK J SPLIT   # one config; prints total and steady s/proof
"""
import sys
import time

import simpy

# Phase 8 costs, seconds.
SYNTH, PREP, KERNELS, BG2, EPI = 36.5, 1.5, 3.746, 0.38, 0.32
PARTITIONS, PROOFS = 10, 5


def simulate(pw, gw, lock, j, split, proofs=PROOFS, partitions=PARTITIONS):
    env = simpy.Environment()
    permits = simpy.Resource(env, capacity=pw)
    gpu_lock = simpy.Resource(env, capacity=1)
    queue = simpy.Store(env)
    in_flight = simpy.Resource(env, capacity=j)
    done_at = []
    remaining = {}
    admitted = {}

    def finish_partition(proof):
        remaining[proof] -= 1
        if remaining[proof] == 0:
            done_at.append(env.now)
            in_flight.release(admitted.pop(proof))

    def synthesis(proof):
        with permits.request() as req:
            yield req
            yield env.timeout(SYNTH)
        yield queue.put(proof)

    def proof_process(proof):
        req = in_flight.request()
        yield req
        admitted[proof] = req
        remaining[proof] = partitions
        for _ in range(partitions):
            env.process(synthesis(proof))

    def finalizer(proof):
        yield env.timeout(BG2 + EPI)
        finish_partition(proof)

    def gpu_worker():
        while True:
            proof = yield queue.get()
            if lock == "whole":
                with gpu_lock.request() as req:
                    yield req
                    yield env.timeout(PREP + KERNELS)
                    if not split:
                        yield env.timeout(BG2 + EPI)
            else:
                yield env.timeout(PREP)
                with gpu_lock.request() as req:
                    yield req
                    yield env.timeout(KERNELS)
                if not split:
                    yield env.timeout(BG2 + EPI)
            if split:
                env.process(finalizer(proof))
            else:
                finish_partition(proof)

    for p in range(proofs):
        env.process(proof_process(p))
    for _ in range(gw):
        env.process(gpu_worker())
    env.run()
    done_at.sort()
    total = done_at[-1] / len(done_at)
    steady = (done_at[-1] - done_at[0]) / (len(done_at) - 1) if len(done_at) > 1 else total
    return total, steady


def sweep():
    """pw 1..25 x gw 1..2 x j 1..5 x lock {whole, kernels} x split {no, yes} = 1000."""
    n = 0
    for pw in range(1, 26):
        for gw in (1, 2):
            for j in range(1, 6):
                for lock in ("whole", "kernels"):
                    for split in (False, True):
                        simulate(pw, gw, lock, j, split)
                        n += 1
    return n


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "sweep":
        t = time.perf_counter()
        n = sweep()
        print(f"{n} {time.perf_counter() - t:.6f}")
    elif len(sys.argv) == 7 and sys.argv[1] == "one":
        pw, gw, lock, j, split = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), sys.argv[6] == "true"
        total, steady = simulate(pw, gw, lock, j, split)
        print(f"{total:.6f} {steady:.6f}")
    else:
        print(__doc__)
        sys.exit(2)
