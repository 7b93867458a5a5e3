"""Tournament management for the referee station: players, rounds, pairings, results, standings.

Pure values and functions (no I/O) except :mod:`.store`; nothing here imports the network or
station code, so the dashboard drives it and the tests check it alone (docs/tournament.md).

| module | what |
|---|---|
| :mod:`.model` | ``Tournament``, ``Player``, ``Round``, ``Pairing``, ``Result`` (immutable) |
| :mod:`.director` | the referee's steps: create, enter, pair, assign boards, report, confirm |
| :mod:`.swiss` | Swiss pairings for the two-player games (maximum-weight matching, networkx) |
| :mod:`.seating` | Topple tables of 3-4 players |
| :mod:`.standings` | points and tie-breaks |
| :mod:`.export` | standings and pairings as CSV, the list of the games' records |
| :mod:`.store` | the tournament in SQLite |
"""
