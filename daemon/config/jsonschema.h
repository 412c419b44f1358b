/* A small JSON Schema validator over cJSON: only the keywords the
 * kenaf-simd schema uses, with error messages that say where (a JSON path
 * such as $.robots[0].backend.type), what was expected and what was found. */
#ifndef KN_JSONSCHEMA_H
#define KN_JSONSCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* Called once per problem; path is "$..." and message has no trailing
 * newline. Both strings are only valid during the call. */
typedef void (*kn_jsonschema_report_fn)(void *ctx, const char *path, const char *message);

/* Checks that a schema uses only supported keywords with well-formed
 * values (patterns compile, bounds are numbers, each default satisfies its
 * own subschema), so a typo in the schema cannot silently disable a check.
 * Supported: type (incl. "integer"), properties, required,
 * additionalProperties, items, minItems, maxItems, minimum, maximum,
 * exclusiveMinimum, exclusiveMaximum, enum, minLength, maxLength, pattern
 * (POSIX extended regex, unanchored), default, description, title,
 * $schema, $id, $comment. Returns the number of problems reported. */
size_t kn_jsonschema_check(const cJSON *schema, kn_jsonschema_report_fn report, void *ctx);

/* Validates doc against a schema that passed kn_jsonschema_check. Reports
 * every error until max_errors have been reported, then stops; a key that
 * the schema lists in properties and that appears twice in one object is
 * an error too (cJSON keeps both, a reader would see only one). Returns
 * the number reported. String lengths count Unicode code points; strings
 * are assumed to be valid UTF-8. */
size_t kn_jsonschema_validate(const cJSON *schema, const cJSON *doc, size_t max_errors,
                              kn_jsonschema_report_fn report, void *ctx);

/* A value for an error message: "string \"abc\"", "number 1.5", "true",
 * "an object"... (with_type) or "\"abc\"", "1.5", ... (without). Long
 * strings are cut and control characters escaped. Always NUL-terminates. */
void kn_jsonschema_describe(const cJSON *v, bool with_type, char *buf, size_t len);

/* Appends a string as a quoted, escaped, length-capped JSON string. */
void kn_jsonschema_quote(const char *s, char *buf, size_t len);

#endif
