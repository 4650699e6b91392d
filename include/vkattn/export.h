/* vkattn/export.h - the VKATTN_API export macro.
 *
 * The library is built with hidden symbol visibility; only declarations marked
 * VKATTN_API are exported. Static builds define VKATTN_STATIC (the CMake target
 * and vkattn.pc pass it on to consumers).
 */
#ifndef VKATTN_EXPORT_H
#define VKATTN_EXPORT_H

#if defined(VKATTN_STATIC)
#define VKATTN_API
#elif defined(_WIN32)
#if defined(VKATTN_BUILDING)
#define VKATTN_API __declspec(dllexport)
#else
#define VKATTN_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define VKATTN_API __attribute__((visibility("default")))
#else
#define VKATTN_API
#endif

#endif /* VKATTN_EXPORT_H */
