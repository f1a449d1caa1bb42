"""A whole `hf-ecg generate` run (every default) with the writer taking one shard a call, then several (up to 1,024
samples), alternately in one process: seconds in the decoder and in the writer, and writer / templates."""

import sys, time, shutil
import hf_ecg.runtime.filling as filling_module
from hf_ecg.runtime.decoding_base import BlockDecoder
from hf_ecg.runtime.mention_writer import MentionWriter
from hf_ecg.synthetic.generate import generate_dataset

model, n, out, order = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split(",")
spent = {"templates": 0.0, "writer": 0.0}


def timed(kind, real):
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            spent[kind] += time.perf_counter() - start

    return wrapper


BlockDecoder.decode = timed("templates", BlockDecoder.decode)
MentionWriter.write = timed("writer", MentionWriter.write)
for name in order:
    filling_module.MAX_KEPT_PREFIXES = {"one-shard": 256, "grouped": 1024}[name]
    spent.update(templates=0.0, writer=0.0)
    shutil.rmtree(f"{out}-{name}", ignore_errors=True)
    start = time.perf_counter()
    generate_dataset(model, f"{out}-{name}", n, seed=1, progress_bar=False)
    whole = time.perf_counter() - start
    print(
        f"{name}: whole {whole:.1f} s, templates {spent['templates']:.1f} s, writer {spent['writer']:.1f} s, "
        f"writer/templates {spent['writer'] / spent['templates']:.3f}",
        flush=True,
    )
