#!/usr/bin/env bash
# Copies the screenshots of docs/tour.md from the browser tests' output (npm test writes them
# to test-results/screenshots/) into docs/tour/. Run after `npm test` when the console changed.
set -euo pipefail
cd "$(dirname "$0")/.."
shots=(demo-overview demo-lease demo-failovers demo-digest stack-demo-overview stack-demo-sources
       overview-source-down lease-detail-renewals overview-dark lease-unknown
       outage-overview-desktop outage-overview-phone phone-overview phone-menu-open phone-lease phone-failovers)
mkdir -p docs/tour
for shot in "${shots[@]}"; do
  if [[ ! -f test-results/screenshots/$shot.png ]]; then
    echo "tour: test-results/screenshots/$shot.png is missing: run npm test first" >&2
    exit 1
  fi
  cp "test-results/screenshots/$shot.png" "docs/tour/$shot.png"
done
echo "tour: copied ${#shots[@]} screenshots to docs/tour/"
