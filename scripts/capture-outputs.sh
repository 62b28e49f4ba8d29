#!/bin/bash
# Outputs that a refactor must leave unchanged (issue 35): every built-in profile, its --dry-run plan,
# the README's dry runs, k8s-job, every --help and a few errors, one file each under OUTDIR.
# Compare two builds with: diff -r OUT_A OUT_B   (k8s-job's "in …" countdown differs by design).
#   scripts/capture-outputs.sh BIN OUTDIR
B=$1; O=$2; mkdir -p $O; cd $O
for p in $($B profiles 2>/dev/null | awk 'NR>0{print $1}' | grep -v '^NAME$' ); do
  $B profiles $p > prof-$p.txt 2>&1
  $B run --profile $p --dry-run > run-dry-$p.txt 2>&1; echo "rc=$?" >> run-dry-$p.txt
done
$B profiles > profiles.txt 2>&1
$B run --profile resume-chaos --rate 500 --dry-run > readme-run-dry.txt 2>&1; echo "rc=$?" >> readme-run-dry.txt
$B sweep --profile capacity-sweep --dry-run > readme-sweep-dry.txt 2>&1; echo "rc=$?" >> readme-sweep-dry.txt
$B soak --dry-run > soak-dry.txt 2>&1; echo "rc=$?" >> soak-dry.txt
$B run --dry-run --processes 3 > run-dry-proc.txt 2>&1; echo "rc=$?" >> run-dry-proc.txt
$B run --url http://127.0.0.1:9/mcp --rate 100 --duration 5s --dry-run -H 'X-A: b' > run-dry-url.txt 2>&1; echo "rc=$?" >> run-dry-url.txt
$B k8s-job --parallelism 4 --url http://svc:8080/mcp --image img:1 --start-at 2030-01-01T00:00:00Z > k8s.txt 2>&1; echo "rc=$?" >> k8s.txt
for c in "" run sweep soak compare merge plot probe profiles proxy report serve k8s-job; do $B $c --help > help-${c:-root}.txt 2>&1; done
$B run --rate abc > err-rate.txt 2>&1; echo "rc=$?" >> err-rate.txt
$B run --profile nosuch > err-prof.txt 2>&1; echo "rc=$?" >> err-prof.txt
$B run --vus 0 --dry-run > err-vus.txt 2>&1; echo "rc=$?" >> err-vus.txt
$B run --max-message-bytes 1 --duration 2s --warmup 0s --no-results --quiet > err-msgbytes.txt 2>&1; echo "rc=$?" >> err-msgbytes.txt
