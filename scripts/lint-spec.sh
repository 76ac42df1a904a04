#!/usr/bin/env bash
# `npm run lint:spec`: the contract's two linters, on the files of spec/ (zero errors, zero warnings).
#
# Redocly lints them as they are: it follows every $ref and names the file of each problem. Spectral
# lints them bundled into one document first, the document every other tool reads: its OpenAPI 3.1
# schema rule refuses a path item given by $ref (stoplightio/spectral#2655), and its rules that read the
# document unresolved (oas3-schema, oas3-unused-component) would see the root document only. A problem
# Spectral reports is at a place of the bundle (paths./api/.../post...): the root's $ref for that path,
# or for that component, names the file to fix.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=node_modules/.bin
bundle="$(mktemp -d "${TMPDIR:-/tmp}/palanque-lint-spec.XXXXXX")"
trap 'rm -rf "$bundle"' EXIT
"$bin/redocly" bundle spec/openapi.yaml --ext json --output "$bundle/openapi.json" >/dev/null
"$bin/spectral" lint --ruleset .spectral.yaml --fail-severity=hint "$bundle/openapi.json"
"$bin/redocly" lint --format=stylish spec/openapi.yaml
