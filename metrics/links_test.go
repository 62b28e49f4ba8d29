package metrics
