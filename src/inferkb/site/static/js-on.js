// Loaded before the body of a page whose long tables arrive with only their first rows shown: marks the page as
// scripted so site.css keeps the later rows hidden until site.js draws them (without JavaScript they all show).
"use strict";
document.documentElement.classList.add("js");
