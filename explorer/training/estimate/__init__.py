"""What a planned run will cost and do, before it starts: its time on this machine (measured, not guessed),
the number of steps in one epoch, and the learning rate Eq. 3 will follow.

The train page shows these next to its knobs so a lecturer can size a run for the time at hand. Measuring
beats a formula: the same model trains at very different speeds on different CPUs and GPUs.

- `measure`: `measure_run` builds the run's own `Trainer` and times its parts as the run's process will run
  them: the trainer's `train_step` on its own batches of the corpus, its first steps as warm-up, one
  evaluation, a checkpoint, the worker's per-step checks and progress writes; `estimate_run` measures and plans.
- `harness`: how a step is timed: the worker's torch threads and priority, a spread sample of the epoch's
  batches, the median of repeated timings, big batches timed on part of their rows.
- `startup`: the training process's own start (a new interpreter importing torch), timed in a child.
- `plan`: the arithmetic, no timing: `RunCosts.estimate` multiplies measured costs by a plan (steps,
  evaluation and save intervals) into a `RunEstimate`, so a page re-plans without timing again; steps per
  epoch; the planned learning-rate schedule.

The estimate is of this machine at the moment it is measured: other work that starts or stops before the run
(another run, a class opening pages) changes the run's pace, and `RunCosts` keeps the load average it was
measured at so a page can say when that has moved. `python -m benchmarks.while_training --estimates` checks
the estimate against real runs. None of these modules imports the training loop at import time: the app's
server plans with them and only `measure_run` loads the trainer.
"""
