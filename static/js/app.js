// AgentNava's pages: the few behaviours that would otherwise be inline script, which the
// Content-Security-Policy forbids (script-src 'self', no eval: htmx runs with allowEval off).
(function () {
  "use strict";
  // A button with data-confirm asks first; "Cancel" keeps its form from being sent.
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("[data-confirm]") : null;
    if (button && !window.confirm(button.getAttribute("data-confirm"))) {
      event.preventDefault();
    }
  });
  // A form marked data-reset-on-success is emptied once htmx has sent it successfully.
  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.detail && event.detail.elt;
    if (form && form.matches && form.matches("form[data-reset-on-success]") && event.detail.successful) {
      form.reset();
    }
  });
})();
