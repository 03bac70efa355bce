import os

import pytest

from tests.ops.redis_helpers import TEST_REDIS_URL


@pytest.fixture
def redis_url():
    import redis

    client = redis.from_url(TEST_REDIS_URL)
    try:
        client.ping()
    except redis.ConnectionError:
        if os.environ.get("REQUIRE_REDIS") == "1":
            pytest.fail(f"Redis does not answer at {TEST_REDIS_URL} and REQUIRE_REDIS=1")
        pytest.skip(f"Redis does not answer at {TEST_REDIS_URL}")
    client.flushdb()
    yield TEST_REDIS_URL
    client.flushdb()
