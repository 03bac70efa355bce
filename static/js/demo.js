// The demo site's own consent step: its buttons call the website chat's AgentNava.memory.set.
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("[data-memory-set]") : null;
    if (!button || !window.AgentNava) return;
    window.AgentNava.memory.set(button.getAttribute("data-memory-set")).then(function () {
      document.getElementById("site-consent-result").textContent = button.getAttribute("data-thanks");
    });
  });
})();
