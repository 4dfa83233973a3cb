"""An MCAP file written a block of messages at a time: the messages' records are laid out with
numpy (one header array per block, offsets and the message indexes by cumulative sums), and
every other record is the ``mcap`` library's own (its ``records`` classes), so the file is what its
``Writer`` makes -- chunked, zstd-compressed, each chunk followed by its message indexes, a summary
with the schemas, channels, statistics and chunk and metadata indexes -- at a fraction of the
cost: ``Writer.add_message`` spends ~30 µs of Python a message, and a recording of a million rows
holds tens of millions of them.

GUI-free; any thread.
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Mapping, Sequence
from typing import IO

import numpy as np
from mcap.data_stream import RecordBuilder
from mcap.opcode import Opcode
from mcap.records import (
    Channel,
    Chunk,
    ChunkIndex,
    DataEnd,
    Footer,
    Header,
    Metadata,
    MetadataIndex,
    Schema,
    Statistics,
    SummaryOffset,
)

__all__ = ["McapStream"]

MAGIC = b"\x89MCAP0\r\n"
CHUNK_BYTES = 4 * 2**20
"""Messages' bytes (uncompressed) to a chunk, about."""

_HEAD = np.dtype(
    [
        ("op", "u1"),
        ("length", "<u8"),
        ("channel", "<u2"),
        ("sequence", "<u4"),
        ("log_time", "<u8"),
        ("publish_time", "<u8"),
    ]
)
"""A message record up to its data: opcode, record length, channel, sequence, two times (31 bytes)."""


class McapStream:
    """``schema``/``channel``/``metadata`` once, then ``messages`` block after block, ``finish``."""

    def __init__(self, fh: IO[bytes], *, library: str) -> None:
        import zstandard

        self._fh, self._pos = fh, 0
        self._zstd = zstandard.ZstdCompressor()
        self._schemas: list[Schema] = []
        self._channels: list[Channel] = []
        self._chunk_indexes: list[ChunkIndex] = []
        self._metadata_indexes: list[MetadataIndex] = []
        self._counts: dict[int, int] = {}
        self._span: list[int] = []  # first and last log time of the file (ns)
        self._parts: list[bytes] = []  # the open chunk's records
        self._size = 0
        self._index: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (channels, times, offsets)
        self._write(MAGIC)
        self._record(Header(profile="", library=library))

    def _write(self, data: bytes) -> int:
        at = self._pos
        self._fh.write(data)
        self._pos += len(data)
        return at

    def _record(self, record: object) -> tuple[int, int]:
        """Write one of the library's records; its (offset, length)."""
        builder = RecordBuilder()
        record.write(builder)  # type: ignore[attr-defined]
        data = builder.end()
        return self._write(data), len(data)

    def schema(self, schema_id: int, name: str, encoding: str, data: bytes) -> None:
        self._schemas.append(Schema(id=schema_id, name=name, encoding=encoding, data=data))
        self._record(self._schemas[-1])

    def channel(self, channel_id: int, schema_id: int, topic: str, encoding: str) -> None:
        self._channels.append(
            Channel(id=channel_id, schema_id=schema_id, topic=topic, message_encoding=encoding, metadata={})
        )
        self._record(self._channels[-1])

    def metadata(self, name: str, values: Mapping[str, str]) -> None:
        offset, length = self._record(Metadata(name=name, metadata=dict(values)))
        self._metadata_indexes.append(MetadataIndex(offset=offset, length=length, name=name))

    def messages(
        self, channels: np.ndarray, sequences: np.ndarray, times: np.ndarray, payloads: Sequence[bytes]
    ) -> None:
        """Messages in the order given: ``channels`` (uint16), ``sequences`` (uint32), ``times``
        (log and publish time, ns, uint64) and each one's data."""
        n = len(payloads)
        if n == 0:
            return
        sizes = np.fromiter(map(len, payloads), dtype=np.uint64, count=n)
        head = np.empty(n, dtype=_HEAD)
        head["op"], head["length"] = int(Opcode.MESSAGE), sizes + 22
        head["channel"], head["sequence"] = channels, sequences
        head["log_time"] = head["publish_time"] = times
        ends = np.cumsum(sizes + _HEAD.itemsize)
        self._index.append(
            (
                channels.astype(np.uint16),
                times.astype(np.uint64),
                (ends - sizes - _HEAD.itemsize + self._size).astype(np.uint64),
            )
        )
        raw = head.tobytes()
        step = _HEAD.itemsize
        heads = [raw[i : i + step] for i in range(0, n * step, step)]
        self._parts.append(b"".join(itertools.chain.from_iterable(zip(heads, payloads))))
        self._size += int(ends[-1])
        for c, k in zip(*np.unique(channels, return_counts=True)):
            self._counts[int(c)] = self._counts.get(int(c), 0) + int(k)
        lo, hi = int(times.min()), int(times.max())
        self._span = [min(self._span[0], lo), max(self._span[1], hi)] if self._span else [lo, hi]
        if self._size >= CHUNK_BYTES:
            self._chunk()

    def _chunk(self) -> None:
        """The open chunk to the file, then its message indexes."""
        if not self._parts:
            return
        records = b"".join(self._parts)
        channels, times, offsets = (np.concatenate(a) for a in zip(*self._index))
        start, end = int(times.min()), int(times.max())
        packed = self._zstd.compress(records)
        chunk_at, chunk_length = self._record(
            Chunk(
                message_start_time=start,
                message_end_time=end,
                uncompressed_size=len(records),
                uncompressed_crc=0,
                compression="zstd",
                data=packed,
            )
        )
        order = np.argsort(channels, kind="stable")  # each channel's messages, in the order written
        channels, times, offsets = channels[order], times[order], offsets[order]
        cuts = np.flatnonzero(np.diff(channels)) + 1
        index_offsets, index_length = {}, 0
        for ch, t, o in zip(np.split(channels, cuts), np.split(times, cuts), np.split(offsets, cuts)):
            pairs = np.column_stack((t, o)).astype("<u8").tobytes()  # MessageIndex, laid out at once
            record = struct.pack("<BQHI", int(Opcode.MESSAGE_INDEX), 6 + len(pairs), int(ch[0]), len(pairs)) + pairs
            index_offsets[int(ch[0])] = self._write(record)
            index_length += len(record)
        self._chunk_indexes.append(
            ChunkIndex(
                message_start_time=start,
                message_end_time=end,
                chunk_start_offset=chunk_at,
                chunk_length=chunk_length,
                message_index_offsets=index_offsets,
                message_index_length=index_length,
                compression="zstd",
                compressed_size=len(packed),
                uncompressed_size=len(records),
            )
        )
        self._parts, self._size, self._index = [], 0, []

    def finish(self) -> None:
        """The last chunk, the summary (schemas, channels, statistics, indexes) and the footer."""
        self._chunk()
        self._record(DataEnd(data_section_crc=0))
        summary_start = self._pos
        groups: list[tuple[int, int, int]] = []
        for opcode, records in (
            (Opcode.SCHEMA, self._schemas),
            (Opcode.CHANNEL, self._channels),
            (
                Opcode.STATISTICS,
                [
                    Statistics(
                        message_count=sum(self._counts.values()),
                        schema_count=len(self._schemas),
                        channel_count=len(self._channels),
                        attachment_count=0,
                        metadata_count=len(self._metadata_indexes),
                        chunk_count=len(self._chunk_indexes),
                        message_start_time=self._span[0] if self._span else 0,
                        message_end_time=self._span[1] if self._span else 0,
                        channel_message_counts=dict(sorted(self._counts.items())),
                    )
                ],
            ),
            (Opcode.CHUNK_INDEX, self._chunk_indexes),
            (Opcode.METADATA_INDEX, self._metadata_indexes),
        ):
            if records:
                start = self._pos
                for record in records:
                    self._record(record)
                groups.append((int(opcode), start, self._pos - start))
        offsets_start = self._pos
        for group_opcode, start, length in groups:
            self._record(SummaryOffset(group_opcode=group_opcode, group_start=start, group_length=length))
        self._record(Footer(summary_start=summary_start, summary_offset_start=offsets_start, summary_crc=0))
        self._write(MAGIC)
