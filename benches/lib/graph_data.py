"""The graph benchmark's data: a seeded social graph shaped like Pokec (the Slovak social network
the 2018 NoSQL performance benchmark used), at any size, with the answers to the sample queries
computed here as the oracle both databases are checked against. Standard library only.

What it is: VERTICES profiles (default 200,000) with keys 1 .. VERTICES and about 400 bytes of
attributes each, and about 19 × VERTICES directed relations with a `weight` of 1 .. 10.
Out-degrees follow a Lomax (Pareto II) law, alpha 2.5, mean about 19, capped at 1,000: many
profiles with a handful of friends, some with hundreds, a few percent with none. Targets are
drawn in proportion to a Pareto (1.5) popularity per profile, so in-degrees are heavy-tailed too
(preferential). No self-loops, no parallel edges: every answer (distinct neighbours, hop counts,
path weights) is then the same under every system's path semantics.

What it is not: a copy of Pokec. Only the shape (size, mean degree, skew, attribute kinds and
sizes) is imitated; the values are invented.

Invariants: the same (VERTICES, SEED) gives the same files byte for byte. The sample items (start
vertices, pairs) are closed formulas of their index so that pgbench, wrk's Lua and Python agree
on them without a shared file: see `start_of` and `target_of`.

Run alone, `python3 benches/lib/graph_data.py DIR` writes the four files into DIR.
"""

import array
import bisect
import heapq
import itertools
import json
import os
import random
import sys
import time

SEED = 20180614
DEGREE_ALPHA = 2.5
DEGREE_SCALE = 29.0  # Lomax mean: scale / (alpha - 1) = 19.3; the floor takes about 0.5 off, the tail adds some
DEGREE_MAX = 1000
POPULARITY_ALPHA = 1.5
WEIGHT_MAX = 10

# The sample items: item j of a workload is vertex 1 + (j * A + B) % VERTICES. A is a prime, so
# j -> start_of(j) is a permutation of the vertices unless VERTICES is a multiple of it.
START_MULT, START_ADD = 2654435761, 12345
TARGET_MULT, TARGET_ADD = 2246822519, 777

REGIONS = ["bratislavsky kraj, bratislava - ruzinov", "zilinsky kraj, zilina", "kosicky kraj, kosice - juh",
           "presovsky kraj, presov", "nitriansky kraj, nitra", "trnavsky kraj, trnava",
           "banskobystricky kraj, banska bystrica", "trenciansky kraj, trencin", "zahranicie, praha",
           "bratislavsky kraj, bratislava - petrzalka"]
LANGUAGES = ["slovensky", "anglicky", "nemecky", "cesky", "rusky", "madarsky", "francuzsky", "polsky"]
HOBBIES = ["sport", "hudba", "citanie", "cestovanie", "priatelia", "filmy", "pocitace", "turistika",
           "tanec", "varenie", "fotografovanie", "rybarcenie", "auta", "spanie"]
FIELDS = ["student", "it", "obchod", "zdravotnictvo", "skolstvo", "stavebnictvo", "doprava",
          "gastronomia", "administrativa", "ine"]
EYES = ["modre", "hnede", "zelene", "sive"]
HAIR = ["blond", "hnede", "cierne", "ryse", "ziadne"]


def start_of(j, vertices):
    return 1 + (j * START_MULT + START_ADD) % vertices


def target_of(j, vertices):
    return 1 + (j * TARGET_MULT + TARGET_ADD) % vertices


def pairs(count, vertices):
    """The first `count` (start, target) pairs; raises when one would be a vertex to itself."""
    found = [(start_of(j, vertices), target_of(j, vertices)) for j in range(count)]
    for s, t in found:
        if s == t:
            raise RuntimeError(f"VERTICES={vertices}: pair ({s}, {t}) is one vertex; change TARGET_ADD")
    return found


class Graph:
    """Out-adjacency of vertices 1 .. n: `targets[v]` and `weights[v]` are parallel arrays
    (index 0 unused)."""

    def __init__(self, n, targets, weights):
        self.n = n
        self.targets = targets
        self.weights = weights

    @property
    def edges(self):
        return sum(len(t) for t in self.targets)

    def neighbours(self, v):
        return set(self.targets[v])

    def two_hop(self, v):
        """Vertices at depth 1 or 2 from v, v itself excluded (global vertex uniqueness)."""
        found = set(self.targets[v])
        for w in self.targets[v]:
            found.update(self.targets[w])
        found.discard(v)
        return found

    def hops(self, s, t):
        """Unweighted shortest distance (edges) from s to t, or None when t is unreachable."""
        if s == t:
            return 0
        seen, frontier, depth = {s}, [s], 0
        while frontier:
            depth += 1
            following = []
            for v in frontier:
                for w in self.targets[v]:
                    if w == t:
                        return depth
                    if w not in seen:
                        seen.add(w)
                        following.append(w)
            frontier = following
        return None

    def weighted(self, s, t):
        """Least total weight from s to t (Dijkstra), or None when t is unreachable."""
        best, queue = {s: 0}, [(0, s)]
        while queue:
            d, v = heapq.heappop(queue)
            if v == t:
                return d
            if d > best[v]:
                continue
            for w, c in zip(self.targets[v], self.weights[v]):
                if d + c < best.get(w, d + c + 1):
                    best[w] = d + c
                    heapq.heappush(queue, (d + c, w))
        return None


def generate(n, seed=SEED):
    """The graph of `n` vertices for `seed`."""
    rng = random.Random(seed)
    popularity = [0.0] + [(1.0 - rng.random()) ** (-1.0 / POPULARITY_ALPHA) for _ in range(n)]
    cumulative = list(itertools.accumulate(popularity))
    total = cumulative[-1]
    degree_max = min(DEGREE_MAX, n - 1)
    targets, weights = [array.array("i")], [array.array("b")]
    for v in range(1, n + 1):
        degree = min(degree_max, int(DEGREE_SCALE * ((1.0 - rng.random()) ** (-1.0 / DEGREE_ALPHA) - 1.0)))
        chosen = set()
        while len(chosen) < degree:
            w = bisect.bisect_left(cumulative, rng.random() * total, 1, n)
            if w != v:
                chosen.add(w)
        ordered = sorted(chosen)
        targets.append(array.array("i", ordered))
        weights.append(array.array("b", (int(rng.random() * WEIGHT_MAX) + 1 for _ in ordered)))
    return Graph(n, targets, weights)


def profile(v, rng):
    """Profile v's attributes (without the key): about 400 bytes of JSON, ASCII only (the text
    goes into COPY unescaped)."""
    age = rng.choice((0, 0) + tuple(range(14, 70)))  # 0: not given, as often in Pokec
    return {
        "public": rng.random() < 0.7,
        "completion_percentage": int(rng.random() * 101),
        "gender": rng.choice(("male", "female")),
        "region": rng.choice(REGIONS),
        "last_login": f"2012-05-{1 + int(rng.random() * 25):02d} {int(rng.random() * 24):02d}:"
                      f"{int(rng.random() * 60):02d}:00.0",
        "registration": f"{1999 + int(rng.random() * 13)}-{1 + int(rng.random() * 12):02d}-"
                        f"{1 + int(rng.random() * 28):02d} 00:00:00.0",
        "age": age,
        "body": f"{150 + int(rng.random() * 50)} cm, {45 + int(rng.random() * 60)} kg",
        "working_in_field": rng.choice(FIELDS),
        "spoken_languages": ", ".join(rng.sample(LANGUAGES, 1 + int(rng.random() * 3))),
        "hobbies": ", ".join(rng.sample(HOBBIES, 2 + int(rng.random() * 5))),
        "eye_color": rng.choice(EYES),
        "hair_color": rng.choice(HAIR),
        "about_me": f"profil {v}: " + " ".join(rng.sample(HOBBIES, 4)) + " a vela dalsieho",
    }


def write_files(graph, directory, seed=SEED):
    """Writes profiles.jsonl and relations.jsonl (for `quince import`), profiles.csv (id,doc) and
    relations.csv (id,src,dst,weight) (for COPY ... CSV) into `directory`; returns the mean
    profile size in bytes (JSON, with its key)."""
    rng = random.Random(seed + 1)
    size = 0
    with open(os.path.join(directory, "profiles.jsonl"), "w") as fj, \
            open(os.path.join(directory, "profiles.csv"), "w") as fc:
        for v in range(1, graph.n + 1):
            body = json.dumps(profile(v, rng), separators=(",", ":"))
            line = f'{{"_key":"{v}",{body[1:]}'
            size += len(line)
            fj.write(line + "\n")
            fc.write(f'{v},"{body.replace(chr(34), chr(34) * 2)}"\n')
    with open(os.path.join(directory, "relations.jsonl"), "w") as fj, \
            open(os.path.join(directory, "relations.csv"), "w") as fc:
        edge = 0
        for v in range(1, graph.n + 1):
            ends = list(zip(graph.targets[v], graph.weights[v]))
            head = f'{{"_from":"profiles/{v}","_to":"profiles/'
            fj.write("".join(f'{head}{w}","weight":{c}}}\n' for w, c in ends))
            fc.write("".join(f"{edge + i},{v},{w},{c}\n" for i, (w, c) in enumerate(ends, 1)))
            edge += len(ends)
    return size / graph.n


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else "."
    n = int(os.environ.get("VERTICES", "200000"))
    started = time.monotonic()
    graph = generate(n)
    generated = time.monotonic() - started
    size = write_files(graph, directory)
    degrees = sorted(len(t) for t in graph.targets[1:])
    print(f"{n:,} profiles ({size:.0f} B each), {graph.edges:,} relations (mean out-degree "
          f"{graph.edges / n:.1f}, median {degrees[n // 2]}, max {degrees[-1]}, "
          f"{sum(1 for d in degrees if d == 0) / n:.1%} without any); generated in {generated:.1f} s, "
          f"written in {time.monotonic() - started - generated:.1f} s")


if __name__ == "__main__":
    main()
