#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H

#include <libpq-fe.h>

// PG_DIAG_* field codes are character macros, which Swift imports as plain Int32 only when they
// are spelled as integers; these name the ones the store reads.
static const int CLIBPQ_DIAG_SQLSTATE = PG_DIAG_SQLSTATE;
static const int CLIBPQ_DIAG_MESSAGE_PRIMARY = PG_DIAG_MESSAGE_PRIMARY;
static const int CLIBPQ_DIAG_CONSTRAINT_NAME = PG_DIAG_CONSTRAINT_NAME;

#endif
