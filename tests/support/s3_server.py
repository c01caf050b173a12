"""A real S3 server on 127.0.0.1 (moto's), and the URIs a user would give for its objects.

    with s3_server() as store:
        store.put("bucket/data/qa.jsonl", path.read_bytes())
        read_dataset(store.uri("bucket/data/qa.jsonl"))  # s3://bucket/data/qa.jsonl?endpoint_override=...

The fake credentials (`FAKE_AWS`) must be in the environment of every process that opens the
store (the test process and the Ray workers): without them the AWS SDK looks further for
credentials, up to the EC2 metadata address, which is not on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

FAKE_AWS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}


@dataclass
class S3Store:
    endpoint: str  # "127.0.0.1:PORT"
    filesystem: Any  # a pyarrow S3FileSystem on it, allowed to create buckets

    def uri(self, key: str) -> str:
        """What a user passes for `key` ("bucket/path"): the endpoint travels in the query."""
        return f"s3://{key}?endpoint_override={self.endpoint}&scheme=http"

    def put(self, key: str, data: bytes) -> str:
        bucket = key.split("/", 1)[0]
        self.filesystem.create_dir(bucket)  # no-op when it exists
        with self.filesystem.open_output_stream(key, compression=None) as stream:  # as given, even ".gz"
            stream.write(data)
        return self.uri(key)


@contextlib.contextmanager
def s3_server() -> Iterator[S3Store]:
    """moto's S3 server on a free port of 127.0.0.1; FAKE_AWS must be set (see the module docstring)."""
    import pyarrow.fs as pafs
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"{host}:{port}"
        filesystem = pafs.S3FileSystem(endpoint_override=endpoint, scheme="http", region="us-east-1",
                                       allow_bucket_creation=True)
        yield S3Store(endpoint, filesystem)
    finally:
        server.stop()
