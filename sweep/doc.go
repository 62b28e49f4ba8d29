// Package sweep steps the load to the capacity knee: one run per step
// (rate, VUs or sessions), each judged against an SLO, stopping once
// clearly past the knee, then bisecting between the highest passing and
// the lowest failing load; the verdict (maximum sustainable rate, the SLO
// crossing, the knee, memory per session), sweep.json and sweep.csv (this
// package is their only writer), and the step table.
//
// Files: run.go (steps, stop policy, refinement), judge.go (a step's
// reasons, PastKnee, Judge), files.go, text.go. It runs load only through
// workload.Run; it must not record or sample processes itself.
package sweep
