"""Attachment providers, one module per family. Each provider is an async function of the
`AttachmentContext` (and the message history where it needs it) returning attachments."""
