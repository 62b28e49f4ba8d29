// Package sweep steps the load to the capacity knee: one run per step
// (rate, VUs or sessions), each judged against an SLO, stopping once
// clearly past the knee, then bisecting between the highest passing and
// the lowest failing load; the verdict (maximum sustainable rate, the SLO
// crossing, the knee, memory per session), sweep.json and sweep.csv (this
// package is their only writer), and the step table.
//
// Each step's p99 and error rate come with a 95 % confidence interval
// (block bootstrap over its one-second intervals); --repeat runs each
// step several times and pools them; the knee is found by a
// shape-preserving fit (knee.go says how, with its sources and its tested
// tolerance) and is never above the maximum sustainable rate.
//
// Files: run.go (steps, repeats, stop policy, refinement), collect.go (a
// step's intervals, their confidence intervals, pooled repeats), judge.go
// (a step's reasons and marginal flag, PastKnee, Judge, the confidence
// line), knee.go, files.go, text.go. It runs load only through
// workload.Run; it must not record or sample processes itself.
package sweep
