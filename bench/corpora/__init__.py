"""Generated corpora the benchmarks and tests read (nothing downloaded), under bench/.corpus/."""
