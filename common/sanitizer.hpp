#pragma once
// SHARDSYNTH_ASAN is defined in builds with AddressSanitizer (scripts/sanitize,
// the asan preset). GCC defines __SANITIZE_ADDRESS__ under
// -fsanitize=address; clang answers __has_feature(address_sanitizer) instead.
#if defined(__SANITIZE_ADDRESS__)
#define SHARDSYNTH_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SHARDSYNTH_ASAN 1
#endif
#endif
