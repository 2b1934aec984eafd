// The campaign add page (campaigns/admin.py): choosing a template reloads the page with
// one input for each of that template's variables. Only the add page has the select;
// nothing typed is lost, as the template is the first field.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  const select = document.getElementById("id_message_template");
  if (!select || !document.getElementById("campaign_form")) {
    return;
  }
  select.addEventListener("change", function () {
    const url = new URL(window.location.href);
    url.searchParams.set("message_template", select.value);
    window.location.assign(url.toString());
  });
});
