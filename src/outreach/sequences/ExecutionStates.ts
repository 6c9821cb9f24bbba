/** Why a send whose worker died while handing the message to the mail server is `uncertain`: it is never sent twice. */
export const abandonedSendError =
  "The sending process stopped while handing this message to the mail server: it may or may not have been delivered; not sent again (regenerate with includeUncertain to send it anyway)"


/** Why a deleted sequence's unsent executions were skipped. */
export const sequenceDeleted = "The sequence was deleted"

/** Why an unenrolled contact's unsent executions were skipped. */
export const unenrolledReason = "The contact was unenrolled"
