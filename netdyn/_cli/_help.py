"""The description ``netdyn fit --help`` prints above its options."""

FIT_HELP = """\
Fit a delay-coupled network model to the functional connectivity (FC) of training subjects'
BOLD, and score it on test subjects it never saw, with noise it never saw.

With no options: the embedded HCP group connectome (80 AAL2 regions; delays = tract
length / 4 mm/ms, up to 62 ms) and the BOLD of its 7 subjects; two-population Wong-Wang
nodes with feedback inhibition control (rww-ei-fic: every region's inhibitory weight set
so that its excitatory rate is 3 Hz), delayed linear coupling, additive noise,
Balloon-Windkessel BOLD at the data's TR (720 ms). The global coupling G is fitted on the
analytic FC (--engine auto picks linear for this model), and every reported score is
simulated:

- Subjects 1-4 train, subjects 5-7 test (--train-subjects, --test-subjects; by default
  the first half, rounded up, trains): the target is the mean of the training subjects'
  FCs. The test score is reported beside the noise ceiling, the FC r between the training
  and the test subjects' FCs (0.899 here: two groups of people), which no model can be
  expected to beat. --bold reads your own BOLD (one file per subject or run: TSV/CSV as
  fMRIPrep, XCP-D or nilearn write them, with the TR from the BIDS JSON sidecar, or .npy);
  --fc fits a given FC.
- Each step's loss (--engine): linear, the analytic FC of the network linearised at its
  stable fixed point (Lyapunov equation; exact, noise-free, a fraction of a second, exact
  gradients), for models that fluctuate around one (rww-ei-fic); or simulation, the FC
  of 4 noise realisations of 43.2 s of simulated BOLD after a burn-in whose BOLD is not
  compared (57.6 s; 28.8 s for rww-ei-fic), differentiated exactly through the whole
  simulation (--truncated-gradient holds the burn-in's end fixed: cheaper, but it can
  point the wrong way near the critical coupling). The simulation fits what the analytic
  FC cannot: sigma (a uniform noise amplitude cancels in the analytic FC), an FCD term,
  and the single-population rww and hopf models (--model rww fits G,sigma by simulation).
- Pattern and level: the loss is 1 - r + h(mean FC - empirical mean FC), with r the
  Pearson correlation of the FC upper triangles and h Huber's function of width 0.05.
- The start: a scan of 17 values of G, a search for the peak of the mean FC and 8
  bisections of the G where it meets the data's mean FC; the fit starts at the lowest
  loss seen. If no G reaches the data's level, it says so and stops with exit status 3.
  Then Adam refines (12 steps; a step that raises the loss is taken back and retried at
  half the length: netdyn.backtrack). The gradient is checked against central finite
  differences at the start (--no-gradient-check skips it).
- Held-out check: the fitted model is simulated with new noise, 2 independent sets of
  4 x 288 s after the burn-in (--heldout-sets, --heldout-duration; a --duration shorter
  than its default shortens them in proportion); its FC r, mean FC, fraction of pairs
  above 0.9 (saturation) and FCD KS against the training and the test subjects, with
  the fraction of the noise ceiling reached, as mean and sd over the sets.
- Error bars: 95 % intervals of the fitted parameters from other subjects (leaving out
  each training subject) and, with the simulation engine, other noise (4 fresh keys),
  through the loss's Hessian, when at most 8 values are fitted (--uncertainty); a
  parameter the loss does not constrain gets none and is named. With an interval for G,
  the loss along G (5 points) is drawn beside the quadratic model the interval rests on.
- Long check (simulation engine, 2 or more held-out sets): for each fitted global
  value (G, sigma) the error bars gave no interval, the loss at the held-out length at
  0.8x and 1.25x it (sigma along its profile: G moved back onto the fit's FC level at
  each point), each held-out set with its own noise: "lower" on a side where
  every set is lower and the mean change exceeds two standard errors (a caution: the
  fit missed the minimum), "a minimum" where every set rises on both sides by as much,
  else flat within the noise.

Time on 2 CPU cores (float64), an otherwise idle machine (load average 1.0): 148 s
for the whole command (the scan, the gradient check and the fit 30 s; the held-out
simulations 75 s; the error bars 24 s); --quick 48 s (one short held-out set, no error
bars); --model rww (G and sigma by simulation, every step simulated) 959 s at load 3-4.
Measured: benchmarks/fit.md and fit_rww.md in the source repository.

Writes to --out, one folder per fit (each file written atomically): settings.json,
scan.json (the search for the start), params.json (fitted and initial parameters in the
units of --G and --sigma with their intervals, fit and held-out metrics, the scores on
the training and test subjects with the noise ceiling, the settings), history.csv and
history.json (one row per step), fc_simulated.csv, fc_heldout.csv, model.eqx (the fitted
network: nd.cli.load_fitted(DIR)), checkpoint.eqx and fit.png (with matplotlib: pip
install "netdyn[plot]"). A folder with results is not overwritten without --overwrite.
Ctrl-C keeps the steps done and prints the command that continues the fit (--resume).
Exit status: 0 fitted, 1 diverged, 2 bad options or files, 3 no usable start, 130
interrupted.
"""
