#!/bin/bash
# The writer alone, the writer of before (9662f55, a worktree in /tmp/wt-old) and this one, alternating, on the
# same 1,024 JNLPBA templates (the jn186 generator of ../default-generators/, decoded once by writer_profile.py).
# Run alone.
source .venv/bin/activate
M=outputs/s17/jn186
R=results/writer-in-batch
python $R/writer_profile.py $M 1024 time > /dev/null 2>&1  # decodes and saves the templates once
for round in 1 2 3; do
  echo "old: $(PYTHONPATH=/tmp/wt-old/src python $R/writer_profile.py $M 1024 time 2>/dev/null | grep '^writer')"
  echo "new: $(python $R/writer_profile.py $M 1024 time 2>/dev/null | grep '^writer')"
done
