"""pygls's protocol with one leak closed, and this server's own workspace.

The workspace pygls builds at ``initialize`` becomes a :class:`citelens.lsp.textsync.Workspace`
(its documents apply an edit in two slices and break lines as LSP does): the change is
this server instance's, pygls's classes are not patched.

Also: a ``$/cancelRequest`` for a request already answered is dropped without pygls's
warning (the editor's output filled with "Cancel notification for unknown message id").

Also: a request whose parameters pygls cannot read (a position with line -1 or
2**31, beyond LSP's unsigned integers) was dropped without a reply, and a client
waiting for it hung. It now gets an "Invalid Params" error reply.

Also: an answer from the client to a request this server gave up waiting for (a settings
pull or a progress bar asked by a check that was superseded, or past its time limit) is
dropped. pygls set the result of the cancelled future, which raised, and the editor showed
"Error in server: CANCELLED: <Future …>" (issue 41 #8).

pygls 2.1 keeps a future per notification handled by a generator handler (its
built-in didOpen/didChange/didSave handlers are generators) in
``_request_futures`` and never removes it: entries are popped only when a
response is sent, and notifications get none. Over hours of typing that is
unbounded growth (measured: ~2 kB per edit, +35 % RSS over 10,000 edits).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol
from pygls.workspace import Workspace as PyglsWorkspace

from citelens.lsp.textsync import Workspace

#: What :meth:`CiteLensProtocol.structure_message` gives for a request already answered
#: with an error: :meth:`CiteLensProtocol.handle_message` drops it.
_ANSWERED = object()


class CiteLensProtocol(LanguageServerProtocol):
    @property
    def _workspace(self) -> PyglsWorkspace | None:
        return self.__dict__.get("_citelens_workspace")

    @_workspace.setter
    def _workspace(self, workspace: PyglsWorkspace | None) -> None:
        """pygls's ``initialize`` sets a plain workspace: this server's replaces it."""
        if workspace is not None and not isinstance(workspace, Workspace):
            workspace = Workspace(
                workspace.root_uri,
                workspace._sync_kind,
                list(workspace.folders.values()),
                workspace.position_encoding,
            )
        self.__dict__["_citelens_workspace"] = workspace

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if not (isinstance(data, dict) and "method" in data and "id" in data):
                raise
            error = exc.to_response_error()
            error.message = (
                f"{error.message}: cannot read the parameters of "
                f"{str(data.get('method'))[:80]} (a line or character outside "
                f"0..2^31-1?)"
            )
            self._send_response(data["id"], error=error)
            return _ANSWERED

    def handle_message(self, message: Any) -> None:
        if message is _ANSWERED:
            return
        super().handle_message(message)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        """``$/cancelRequest`` for a request already answered is normal (the answer and the
        cancel crossed: VS Code cancels every hover it no longer shows): nothing to do, and
        nothing to log. pygls logged a warning ("Cancel notification for unknown message
        id") into the editor's output for each."""
        if msg_id not in self._request_futures:
            return
        super()._handle_cancel_notification(msg_id)

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Callable[..., Any],
        callback: Callable[..., Any],
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        super()._execute_handler(msg_id=msg_id, handler=handler, callback=callback, args=args, kwargs=kwargs)
        if callback != self._check_handler_result:
            return  # a request: its future is removed when the response is sent
        future: Future[Any] | None = self._request_futures.get(msg_id)
        if future is None:
            return
        if future.done():
            self._request_futures.pop(msg_id, None)
        else:
            future.add_done_callback(lambda _f: self._request_futures.pop(msg_id, None))

    def _handle_response(self, msg_id: Any, result: Any | None = None, error: Any | None = None) -> None:
        """An answer to a request this server sent; one whose caller gave up (its future
        cancelled) has no one to hear it and is dropped."""
        future: Future[Any] | None = self._request_futures.get(msg_id)
        if future is not None and future.cancelled():
            self._request_futures.pop(msg_id, None)
            return
        super()._handle_response(msg_id, result, error)
