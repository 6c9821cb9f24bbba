/** What a send whose worker died after handing the message to the mail server becomes: failed, never sent twice. */
export const abandonedSendError = "The sending worker stopped while handing this message to the mail server; not sent again"


/** Why a deleted sequence's unsent executions were skipped. */
export const sequenceDeleted = "The sequence was deleted"

/** Why an unenrolled contact's unsent executions were skipped. */
export const unenrolledReason = "The contact was unenrolled"
