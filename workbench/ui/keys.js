// j / k for the review app, and the export pane's "open" links. Listens on the app's root (found by class
// once attached) so the keys work wherever the reader clicked in the app, but not while typing in a text
// box. `data-lm-suppress-shortcuts` tells JupyterLab not to treat the same key press as "move to the
// next/previous cell".
//
// Focus is what makes keys reach the app, and three things take it away: JupyterLab focuses the cell on
// mousedown (so a click on a non-input part of the app takes the focus back to the app's root); a button
// keeps the focus after a click (Next, Prev, Draft...), and it may then be disabled or re-rendered, which
// drops the focus on <body> (so buttons hand the focus to the root after their click); a text box keeps
// it after typing (Escape hands it to the root). ipywidgets' text boxes stop their key events from
// bubbling (so JupyterLab's shortcuts do not fire while typing), so the root listens in the capture phase.
const TYPING = ["INPUT", "TEXTAREA", "SELECT", "OPTION"];
const typing = (t) => t && (t.isContentEditable || TYPING.includes(t.tagName));

// The export pane's "open" link is JupyterLab's URL of the file (a new JupyterLab tab); where the page
// exposes the app (expose_app_in_browser), the file opens beside the notebook instead.
function openExport(event, link) {
  const app = window.jupyterapp;
  if (app && app.commands && app.commands.hasCommand("docmanager:open")) {
    event.preventDefault();
    app.commands.execute("docmanager:open", { path: link.getAttribute("data-wb-open") });
  }
}

function render({ model, el }) {
  el.classList.add("wb-keys");
  el.textContent = "keys: j next · k previous (click the app first)";
  let root = null, tries = 0;
  const onKey = (event) => {
    const t = event.target;
    if (event.key === "Escape" && typing(t)) {
      root.focus({ preventScroll: true }); // done typing: j/k move the queue again
      event.stopPropagation();
      return;
    }
    if (typing(t)) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "j" || event.key === "k") {
      event.preventDefault();
      event.stopPropagation();
      model.send({ key: event.key });
    }
  };
  const onClick = (event) => {
    const t = event.target;
    const link = t && t.closest && t.closest("a[data-wb-open]");
    if (link) return openExport(event, link);
    if (typing(t) || (t.closest && t.closest("a, select, textarea, input"))) return;
    // A button or any other part of the app: the root takes the keyboard (after the button's own click).
    setTimeout(() => root.focus({ preventScroll: true }), 0);
  };
  const attach = () => {
    root = el.closest(".wb-app");
    if (!root) {  // not in the DOM yet: ipywidgets attaches children after rendering them
      if (tries++ < 100) setTimeout(attach, 100);
      return;
    }
    root.setAttribute("data-lm-suppress-shortcuts", "true");
    if (!root.hasAttribute("tabindex")) root.tabIndex = 0;
    root.addEventListener("keydown", onKey, true);
    root.addEventListener("click", onClick);
  };
  attach();
  return () => {
    if (root) {
      root.removeEventListener("keydown", onKey, true);
      root.removeEventListener("click", onClick);
    }
  };
}
export default { render };
