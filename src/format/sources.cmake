# SPDX-License-Identifier: BSD-3-Clause
# format/: msgpack, the B2ND metalayer, NumPy dtype strings.
tessera_core_sources(msgpack.cpp b2nd_meta.cpp dtype.cpp)
