"""Measures: values, one registered spec per family (kernel, reference, aliases), the name parser, the kernels."""

from rankgate.measures.parse import parse_measure, parse_measures
from rankgate.measures.registry import Measure, MeasureSpec, all_specs, get_spec

__all__ = ["Measure", "MeasureSpec", "all_specs", "get_spec", "parse_measure", "parse_measures"]
