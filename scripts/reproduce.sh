#!/usr/bin/env bash
exec verdictpack reproduce --out "${1:-reproduce-out}"
