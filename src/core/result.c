/* Names and default messages of vkattn_result, generated from the one list. */
#include "vkattn/result.h"

const char *vkattn_result_name(vkattn_result result)
{
    switch (result) {
#define VKATTN_X_NAME(name, value, msg) \
    case name:                          \
        return #name;
        VKATTN_RESULT_LIST(VKATTN_X_NAME)
#undef VKATTN_X_NAME
    }
    return "VKATTN_UNKNOWN_RESULT";
}

const char *vkattn_result_message(vkattn_result result)
{
    switch (result) {
#define VKATTN_X_MSG(name, value, msg) \
    case name:                         \
        return msg;
        VKATTN_RESULT_LIST(VKATTN_X_MSG)
#undef VKATTN_X_MSG
    }
    return "unknown result code";
}
