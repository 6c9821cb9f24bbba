/** What a send whose worker died after handing the message to the mail server becomes: failed, never sent twice. */
export const abandonedSendError = "The sending worker stopped while handing this message to the mail server; not sent again"

