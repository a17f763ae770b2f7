"""The rate limits of the judge: `rankgate.retrieve.ratelimit`, shared with `rankgate retrieve`."""

from rankgate.retrieve.ratelimit import RateLimiter, TokenBucket

__all__ = ["RateLimiter", "TokenBucket"]
