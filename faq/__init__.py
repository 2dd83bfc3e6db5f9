"""faq: Functional Aggregate Queries on Apache Spark."""
__version__ = "0.1.0"
