import { useState } from "preact/hooks"
import type { Classification } from "../../outreach/inbox/Api.ts"
import {
  call,
  type Credentials,
  get,
  type InboxDraft,
  type InboxMessageRecord,
  type InboxThread,
  type InboxThreadWithMessages,
  type MailboxRecord,
  type Page
} from "../api.ts"
import { date, Loaded, SandboxedHtml, Section, useAction, useLoad } from "../ui.tsx"

/** Every class the API gives a reply (its `Classification`: a new one fails the type check), as shown. */
const classLabels: Record<Classification, string> = {
  interested: "interested",
  not_interested: "not interested",
  out_of_office: "out of office",
  unsubscribe: "unsubscribe",
  bounce: "bounce",
  other: "other"
}

const label = (classification: Classification | null) => (classification === null ? "—" : classLabels[classification])

/** A message's body: its HTML sandboxed, else its text. */
const Body = (props: { message: InboxMessageRecord }) =>
  props.message.html === null
    ? <pre class="mail-text">{props.message.text}</pre>
    : <SandboxedHtml class="preview mail" title={`Message from ${props.message.from}: ${props.message.subject}`} html={props.message.html} />

/** A reply: written, or drafted by the model (billed) and edited, then sent through the thread's mailbox. */
const Reply = (props: { credentials: Credentials; thread: InboxThreadWithMessages; onSent: () => void }) => {
  const [text, setText] = useState("")
  const { run, Failure } = useAction()
  const path = `/inbox/threads/${props.thread.id}`
  const draft = () => run(() => call<InboxDraft>(props.credentials, "POST", `${path}/draft`, {}).then((answer) => setText(answer.text)))
  const send = (event: SubmitEvent) => {
    event.preventDefault()
    run(() => call(props.credentials, "POST", `${path}/reply`, { text }).then(() => {
      setText("")
      props.onSent()
    }))
  }
  return (
    <form onSubmit={send}>
      <label>Reply<textarea name="text" rows={6} required maxLength={100000} value={text} onInput={(event) => setText(event.currentTarget.value)} /></label>
      <div class="actions">
        <button type="button" class="secondary" onClick={draft}>Draft with AI</button>
        <button type="submit">Send reply</button>
      </div>
      <Failure />
    </form>
  )
}

const ThreadView = (props: { credentials: Credentials; threadId: string; onChanged: () => void }) => {
  const { credentials, threadId } = props
  const thread = useLoad(() => get<InboxThreadWithMessages>(credentials, `/inbox/threads/${threadId}`), [credentials, threadId])
  const { run, Failure } = useAction()
  const patch = (change: { status?: "open" | "archived"; read?: boolean }) =>
    run(() => call(credentials, "PATCH", `/inbox/threads/${threadId}`, change).then(() => {
      thread.reload()
      props.onChanged()
    }))
  return (
    <Loaded state={thread}>
      {(current) => (
        <Section title={`Thread “${current.subject}”`}>
          <p>
            With <strong>{current.contactEmail}</strong> · {current.status} · classified <strong>{label(current.classification)}</strong>
            {current.unread ? " · unread" : ""}
          </p>
          <div class="actions">
            <button type="button" class="secondary" onClick={() => patch({ read: !current.unread })}>{current.unread ? "Mark read" : "Mark unread"}</button>
            <button type="button" class="secondary" onClick={() => patch({ status: current.status === "open" ? "archived" : "open" })}>
              {current.status === "open" ? "Archive" : "Reopen"}
            </button>
          </div>
          <Failure />
          <ol class="mail-messages" aria-label="Messages">
            {current.messages.map((message) => (
              <li class={message.direction}>
                <p>
                  <strong>{message.direction === "inbound" ? message.from : `To ${message.to.join(", ")}`}</strong> · {date(message.receivedAt)}
                  {message.classification !== null && <> · <span class="tag" data-testid="message-classification">{label(message.classification)}</span></>}
                </p>
                <p>{message.subject}</p>
                <Body message={message} />
              </li>
            ))}
          </ol>
          <Reply credentials={credentials} thread={current} onSent={() => { thread.reload(); props.onChanged() }} />
        </Section>
      )}
    </Loaded>
  )
}

/** Mailboxes with their connection state; threads filtered by status and class; a thread read and answered. */
export const Inbox = (props: { credentials: Credentials }) => {
  const { credentials } = props
  const [filter, setFilter] = useState({ status: "open", classification: "" })
  const mailboxes = useLoad(() => get<Page<MailboxRecord>>(credentials, "/inbox/mailboxes?pageSize=100"), [credentials])
  const query = new URLSearchParams({ pageSize: "50", status: filter.status, ...(filter.classification === "" ? {} : { classification: filter.classification }) })
  const threads = useLoad(() => get<Page<InboxThread>>(credentials, `/inbox/threads?${query}`), [credentials, query.toString()])
  const [selected, setSelected] = useState<string>()
  return (
    <>
      <Section title="Mailboxes">
        <Loaded state={mailboxes}>
          {(page) => page.items.length === 0 ? <p>No mailboxes yet: replies reach the inbox through the platform's own addresses.</p> : (
            <table>
              <thead><tr><th>Address</th><th>Name</th><th>State</th><th>Daily limit</th></tr></thead>
              <tbody>
                {page.items.map((mailbox) => (
                  <tr>
                    <td>{mailbox.email}</td><td>{mailbox.displayName ?? ""}</td>
                    <td>{mailbox.status}{mailbox.lastError === null ? "" : ` — ${mailbox.lastError}`}</td><td>{mailbox.dailyLimit ?? "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </Loaded>
      </Section>
      <Section title="Threads">
        <form class="inline" onSubmit={(event) => event.preventDefault()}>
          <label>Status
            <select value={filter.status} onChange={(event) => setFilter({ ...filter, status: event.currentTarget.value })}>
              <option value="open">open</option><option value="archived">archived</option>
            </select>
          </label>
          <label>Classification
            <select value={filter.classification} onChange={(event) => setFilter({ ...filter, classification: event.currentTarget.value })}>
              <option value="">any</option>
              {Object.entries(classLabels).map(([value, shown]) => <option value={value}>{shown}</option>)}
            </select>
          </label>
        </form>
        <Loaded state={threads}>
          {(page) => page.items.length === 0 ? <p>No threads.</p> : (
            <table>
              <thead><tr><th>Subject</th><th>Contact</th><th>Classification</th><th>Messages</th><th>Last message</th></tr></thead>
              <tbody>
                {page.items.map((thread) => (
                  <tr class={thread.unread ? "unread" : undefined}>
                    <td>
                      <button type="button" class="link" aria-current={thread.id === selected ? "true" : undefined} onClick={() => setSelected(thread.id)}>
                        {thread.subject === "" ? "(no subject)" : thread.subject}
                      </button>
                      {thread.unread && <span class="visually-hidden"> (unread)</span>}
                    </td>
                    <td>{thread.contactEmail}</td><td>{label(thread.classification)}</td><td>{thread.messageCount}</td><td>{date(thread.lastMessageAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </Loaded>
      </Section>
      {selected !== undefined && <ThreadView key={selected} credentials={credentials} threadId={selected} onChanged={threads.reload} />}
    </>
  )
}
