package setting

// The settings verdict's errors name: its parsers' and writers'
// parameters.
const (
	VerdictRegression Name = "verdict.ParseRegression's expr"
	VerdictSweepLimit Name = "verdict.ParseSweepLimit's expr"
	VerdictJUnitPath  Name = "verdict.WriteJUnit's path"
)
