/* A WhatsApp-like preview of the message a staff member is writing, redrawn as they
   type: a canned reply (text, or an interactive object as JSON) or a template (header,
   body with {{n}} filled from the examples, footer, buttons). Text only (textContent),
   no network, no dependency. The texts it shows come from the page (data-* attributes),
   in the staff member's language. */
(function () {
  "use strict";

  function field(name) {
    return document.getElementById("id_" + name);
  }

  function value(name) {
    var input = field(name);
    return input ? input.value : "";
  }

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function lines(text) {
    return text.split("\n").map(function (line) { return line.trim(); }).filter(Boolean);
  }

  function fillVariables(text, examples) {
    return text.replace(/\{\{\s*(\d+)\s*\}\}/g, function (whole, number) {
      var example = examples[Number(number) - 1];
      return example ? example : whole;
    });
  }

  function bubble(parts) {
    var box = element("div", "wa-bubble");
    if (parts.header) box.appendChild(element("div", "wa-header", parts.header));
    box.appendChild(element("div", "wa-body", parts.body || ""));
    if (parts.footer) box.appendChild(element("div", "wa-footer", parts.footer));
    (parts.buttons || []).forEach(function (title) {
      box.appendChild(element("div", "wa-button", title));
    });
    return box;
  }

  function interactiveParts(object, labels) {
    var header = object.header && object.header.type === "text" ? object.header.text : null;
    if (object.header && object.header.type && object.header.type !== "text") {
      header = "[" + object.header.type + "]";
    }
    var action = object.action || {};
    var buttons = [];
    if (object.type === "button") {
      buttons = (action.buttons || []).map(function (b) { return (b.reply || {}).title || ""; });
    } else if (object.type === "list") {
      buttons = ["☰ " + (action.button || "")];
    } else if (object.type === "cta_url") {
      buttons = ["↗ " + ((action.parameters || {}).display_text || "")];
    } else if (object.type === "location_request_message") {
      buttons = ["📍 " + labels.location];
    } else if (object.type === "flow") {
      buttons = [(action.parameters || {}).flow_cta || ""];
    }
    return {
      header: header,
      body: (object.body || {}).text,
      footer: (object.footer || {}).text,
      buttons: buttons,
    };
  }

  function cannedParts(labels) {
    var type = value("response_type");
    var response = value("response");
    if (type === "interactive") {
      try {
        return interactiveParts(JSON.parse(response), labels);
      } catch (error) {
        return { body: labels.invalid };
      }
    }
    if (type && type !== "text") return { body: "[" + type + "] " + response };
    return { body: response };
  }

  function templateParts() {
    var examples = lines(value("body_examples"));
    var buttons = lines(value("quick_replies"));
    if (value("url_button_text")) buttons.push("↗ " + value("url_button_text"));
    return {
      header: fillVariables(value("header"), lines(value("header_example"))),
      body: fillVariables(value("body"), examples),
      footer: value("footer"),
      buttons: buttons,
    };
  }

  function start(preview) {
    var labels = {
      invalid: preview.getAttribute("data-invalid") || "",
      location: preview.getAttribute("data-location") || "",
    };
    var source = preview.getAttribute("data-source");
    function draw() {
      var parts = source === "template" ? templateParts() : cannedParts(labels);
      preview.replaceChildren(bubble(parts));
    }
    var form = preview.closest("form") || document;
    form.addEventListener("input", draw);
    form.addEventListener("change", draw);
    draw();
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-whatsapp-preview]").forEach(start);
  });
})();
