"""Model descriptions, one file per paper or variant. Add a variant by writing one file that
builds a :class:`theory.Model`; the suite derives everything else."""
