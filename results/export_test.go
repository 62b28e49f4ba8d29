package results

// Internals the external tests (recorder_test.go, which records with
// package metrics) reach.
var (
	SumResumes       = sumResumes
	SumLedgers       = sumLedgers
	RestateBaseBytes = restateBaseBytes
)

// SpendRestateBase marks w's memory bound for the rows' histograms
// reached: later rows' histograms are not kept.
func (w *ResultsDir) SpendRestateBase() {
	w.mu.Lock()
	w.baseBytes = restateBaseBytes
	w.mu.Unlock()
}
