"""How to cite the method this library implements."""

CITATION = """\
@inproceedings{aggarwal-etal-2023-ecg,
  title     = {{ECG}-{QALM}: Entity-Controlled Synthetic Text Generation using Contextual {Q}{\\&}{A} for {NER}},
  author    = {Aggarwal, Karan and Jin, Henry and Ahmad, Aitzaz},
  booktitle = {Findings of the Association for Computational Linguistics: ACL 2023},
  year      = {2023},
  address   = {Toronto, Canada},
  publisher = {Association for Computational Linguistics},
  pages     = {5649--5660},
  doi       = {10.18653/v1/2023.findings-acl.349},
}
"""
