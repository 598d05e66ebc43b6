"""A process group for tests: N processes joined once (gloo on the CPU, NCCL on GPUs), each
running the module-level functions a test sends it, so that a test costs a function call rather
than N interpreter starts. A failure on any rank fails the test with that rank's traceback; a
rank that does not answer in time (a collective another rank never joined) ends the group."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import tempfile
import traceback
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

# Long enough for torch.compile's first trace on a busy 2-core machine.
ANSWER_TIMEOUT_S = 240


def _serve(rank: int, world_size: int, backend: str, rendezvous: str, pipe) -> None:
    import torch
    import torch.distributed as dist

    if backend == "nccl":
        torch.cuda.set_device(rank)
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    dist.init_process_group(
        backend,
        init_method=f"file://{rendezvous}",
        rank=rank,
        world_size=world_size,
        timeout=timedelta(seconds=60),  # a rank left waiting fails, never hangs the suite
    )
    import vecadd  # noqa: F401  (as a user's program would, after torch)

    while True:
        task = pipe.recv()
        if task is None:
            break
        function, args = task
        try:
            pipe.send((True, function(*args)))
        except BaseException:  # every failure goes back to the test
            pipe.send((False, traceback.format_exc()))
    dist.destroy_process_group()


class Ranks:
    """`world_size` processes in one process group; `run(f, *args)` calls f(*args) on each."""

    def __init__(self, world_size: int, backend: str = "gloo") -> None:
        self.world_size, self.backend = world_size, backend
        self._start()

    def _start(self) -> None:
        context = multiprocessing.get_context("spawn")
        folder = tempfile.mkdtemp(prefix="vecadd-ranks-")
        rendezvous = str(Path(folder) / "rendezvous")
        self.pipes, self.processes = [], []
        for rank in range(self.world_size):
            ours, theirs = context.Pipe()
            process = context.Process(
                target=_serve,
                args=(rank, self.world_size, self.backend, rendezvous, theirs),
                daemon=True,
            )
            process.start()
            self.pipes.append(ours)
            self.processes.append(process)
        self.broken = False

    def run(self, function: Callable, *args) -> list:
        """function(*args) on every rank; each rank's result, in rank order."""
        if self.broken:  # an earlier failure ended the group: the next test gets a new one
            self._start()
        for pipe in self.pipes:
            pipe.send((function, args))
        answers = []
        for rank, pipe in enumerate(self.pipes):
            if not pipe.poll(ANSWER_TIMEOUT_S):
                self.close()
                raise TimeoutError(f"rank {rank} did not answer within {ANSWER_TIMEOUT_S} s")
            answers.append(pipe.recv())
        failures = [(rank, text) for rank, (ok, text) in enumerate(answers) if not ok]
        if failures:
            # The other ranks may wait in a collective the failed one never reached.
            self.close()
            rank, text = failures[0]
            raise AssertionError(f"rank {rank} of {self.world_size} failed:\n{text}")
        return [value for _, value in answers]

    def close(self) -> None:
        self.broken = True
        for pipe, process in zip(self.pipes, self.processes, strict=True):
            if process.is_alive():
                with contextlib.suppress(BrokenPipeError, OSError):
                    pipe.send(None)
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
                process.join()
