"""Measures: values, registry, name parser, vectorized kernels and the evaluation driver."""

from rankgate.measures.parse import parse_measure, parse_measures
from rankgate.measures.registry import Measure, MeasureSpec, all_specs, get_spec

__all__ = ["Measure", "MeasureSpec", "all_specs", "get_spec", "parse_measure", "parse_measures"]
